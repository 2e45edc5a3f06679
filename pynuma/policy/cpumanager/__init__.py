"""The kubelet's CPU Manager: CPU topology, the static policy, its CPU picking and hints."""
