"""Device inventory and topology hints for devices, as the kubelet's device manager gives them."""
