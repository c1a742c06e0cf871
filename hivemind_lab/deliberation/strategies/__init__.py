"""Strategies: the phase plans the one engine runs.

- `deliberation`: the theory loop (generate, monitor, critique, revise), the practicality veto
  and the synthesis, checkpointed after every phase;
- `baseline`: the vote and single-agent baselines at equal compute (proposals in waves, a vote);
- `rescore`: the compliance loop's practicality network run again on a finished run's sets.

They differ in which phases run and how a set is judged; the engine
(`hivemind_lab.deliberation.engine`) owns the caller, cache, audit, scoring and checkpoints.
"""
