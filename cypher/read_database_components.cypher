// The database server's name, version and edition (the health check's first question).
// Parameters: none.
// Returns: name, version, edition.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
