"""samza_nb.control."""
