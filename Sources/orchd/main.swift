// placeholder until the daemon lands
