"""The Messages API boundary: everything that talks to the API and knows its shapes, given a request.

The client protocol and the default client, the one model call (``call_model``: interruption, the response check,
the SDK error mapping), streamed calls read into a ``Message``, the beta resource, containers, credentials and
their redaction, prices, rate limits, and the transports of many executions (online, Message Batches).

May import: ``_shared`` only. It takes a request as a dict of parameters; it knows nothing of agent definitions,
the loop, or anything above them.
"""
