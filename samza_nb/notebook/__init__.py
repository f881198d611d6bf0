"""samza_nb.notebook."""
