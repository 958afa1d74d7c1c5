"""Studies built on the harness: embedding-model migration decisions and aggregation answers."""
