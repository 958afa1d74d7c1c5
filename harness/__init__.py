"""The headless harness: records, scoring, retrieval arms, statistics, certificates, CLI.

Importing any module of the package has no side effects: no connections, no downloads, no
model loads.
"""
