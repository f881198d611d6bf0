"""samza_nb.operators."""
