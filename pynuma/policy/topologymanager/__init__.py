"""The kubelet's Topology Manager: NUMA masks, hints, their merge and the admission policies."""
