// Placeholder until the module is filled.
