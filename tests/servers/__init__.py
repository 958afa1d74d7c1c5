"""Real servers that tests and benchmarks start on this machine (pure standard library).

``tests.servers.opensearch`` starts a single-node OpenSearch 2.19 built from Maven Central by
``tools/opensearch-node/build.sh``.
"""
