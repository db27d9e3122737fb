print("stagerack")
