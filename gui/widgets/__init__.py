"""Reusable widgets: cards, badges, code blocks, the stepper, the log view, pickers."""
