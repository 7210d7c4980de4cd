print("apphostd")
