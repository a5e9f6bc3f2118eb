"""Text utilities shared by the stages: rule-based rewrites and the checks on them."""
