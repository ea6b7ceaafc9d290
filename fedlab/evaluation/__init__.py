"""Evaluating configs: measuring, comparing runs and gating the production config."""
