"""The generators that write tasks against the contract: the capability plan, the procedural scenario families, the
LLM generator and its prompts, deduplication, and the synthesis loop that validates what they write."""
