"""Hypothesis machines over the models and user delivery rules (later issues)."""
