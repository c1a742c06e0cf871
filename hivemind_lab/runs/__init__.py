"""Run artifacts: the one typed layer that reads and writes what a run leaves behind.

A run directory is self-describing. `manifest` is what the run was (versioned, ``schema_version``
first); `results` what it concluded, with the stage data it is made of; `audit` every utterance,
hash-chained; `rundir` the directory's files, written atomically; `chat_export` the audit trail
as conversations. The engine, CLI, replay, baselines, reports and exports all import artifacts
from here, and nothing here imports them: the layer sits above the agents, whose answers it
records, and below everything that runs or reads a run. Import the modules themselves: this
face stays empty so that importing one artifact does not load the others.
"""
