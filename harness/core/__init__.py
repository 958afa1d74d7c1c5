"""The foundation every other package builds on: records, measures, canonical JSON, file
formats with located errors, document ids, licence tiers and the source registry, settings,
random streams derived from a recorded seed, and the command runner.  It imports nothing else
of the project."""
