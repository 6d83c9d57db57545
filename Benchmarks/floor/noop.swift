// A Swift program that does nothing: the start-up floor of a static Swift binary.
