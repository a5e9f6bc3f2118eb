"""The card's row kinds, one model per kind family (their union: ``card.record.CardRow``)."""
