"""What every kind of run shares: the sweep runner, the run directory, configs, manifests."""
