"""Reading a user's input: the rules every section spec shares, pydantic's validation errors as one-line
UserErrors, and Kubernetes quantities as the user writes them.
"""
