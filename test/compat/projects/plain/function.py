"""A function with no dependencies: answers what it was given."""


def handler(event):
    print("function got", event)
    return {"echo": event}
