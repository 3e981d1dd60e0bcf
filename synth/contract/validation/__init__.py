"""Validation of tasks: static checks, lint, execution of the reference and its mutations, and adversaries that must
not pass. ``validate.validate_task`` runs them all."""
