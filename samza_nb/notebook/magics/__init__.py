"""The notebook's magics: their registration and parsing, and the cells they read (config, task, SQL)."""
