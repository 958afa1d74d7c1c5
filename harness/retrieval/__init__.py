"""Retrieval arms: backends, embeddings, fusion, rerank, and the bench that runs an arm."""
