print("orchctl")
