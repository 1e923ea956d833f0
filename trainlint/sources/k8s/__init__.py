"""What the kubernetes format reads of a training object: pods, metadata and known keys."""
