"""What ``ksched.testing`` ships for testing plugins: a fake Handle, a fake snapshot and a
fake plugin per extension point (re-exported there)."""
