"""Text utilities the stages share: token estimates, attacks, preservation, lexicons, embeddings."""
