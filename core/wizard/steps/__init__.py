"""Wizard step code: run by path in the target interpreter (stdlib + torch only, never core)."""
