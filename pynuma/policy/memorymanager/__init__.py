"""The kubelet's Memory Manager: the static policy, its state, reserved memory and hints."""
