"""samza_nb.storage."""
