// The Graph Data Science library's version; fails when the plugin is not installed.
// Parameters: none.
// Returns: version.
RETURN gds.version() AS version
