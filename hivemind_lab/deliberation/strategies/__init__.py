"""Strategies: the phase plans the one engine runs.

- `deliberation`: the theory loop (generate, monitor, critique, revise), the practicality veto
  and the synthesis, and the one result every run ends in;
- `baseline`: the vote and single-agent baselines at equal compute: the deliberation's plan
  with its own generation step (proposals in waves, a vote) and no critique rounds;
- `rescore`: the compliance loop's practicality network run again on a finished run's recorded
  sets, continuing the deliberation on the same engine when a new veto calls for it.

The engine (`hivemind_lab.deliberation.engine`) owns the caller, cache, audit, scoring,
checkpoints and the phase loop (`Engine.drive`).
"""
