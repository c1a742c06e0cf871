"""Agent tasks: what each agent is asked (task models), how it is asked (prompts), and the
shape of its answer (output models). Backends, stages and the offline model all share these."""
