"""Agent tasks: what each agent is asked (task models), how it is asked (prompts), the shape of
its answer (output models) and what the calls consumed (usage). Backends, stages and the offline
model all share these."""
