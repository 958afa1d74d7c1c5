"""Claims: one definition per kind of document the product writes and the warehouse ingests.

Each kind knows its fields, validates a document naming the file and the field, derives its
tier from licences through :mod:`harness.core.tiers` (never trusting a tier written in a
file), and says what makes two documents comparable.
"""
