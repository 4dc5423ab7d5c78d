"""Load generation for heka: scenario definitions (shared by ``heka loadtest`` and
``bench/locustfile.py``), latency statistics and the report, and the asyncio runner.

``scenarios`` and ``stats`` import only the standard library and the generated protobuf
messages (no grpc, no locust), so Locust's gevent workers can use them unchanged.
"""
