"""The bottom layer: determinism primitives (virtual clock, seeded ids), the event bus and
the default tokenizer. Every other layer may import it; it imports no other agentkit layer."""
