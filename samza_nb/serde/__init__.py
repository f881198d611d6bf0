"""samza_nb.serde."""
