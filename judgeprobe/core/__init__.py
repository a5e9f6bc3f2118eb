"""What every layer may use: records, corpus loading, files, TOML reading, CLI helpers."""
