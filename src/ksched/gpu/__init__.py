"""GPU pools: the openb trace, the FGD artifact's experiments, GPU metrics."""
