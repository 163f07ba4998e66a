"""Forgetting, one module per stage, in the paper's words:

- ``intent``: is a chat message a request to forget, and what does it name;
- ``matching``: M, the stored items a request names;
- ``planning``: Dep(M), what is tainted and why, what is derived;
- ``audit``: pseudonymous references and the audit record (never content);
- ``execution``: the crash-safe wipe of the confirmed set, and the rebuild of derived records;
- ``verification``: the scan of what survives for the deleted content;
- ``deferred``: what an in-process confirmation finishes after its verification (the rebuilds' vectors);
- ``hooks``: how higher apps take part (a conversation as a scope, titles to re-derive, stores to scan);
- ``services``: preview, confirm, cancel, resume: the only entry points transports and tasks call.
"""
