package doctor

// CheckText renders one check as the text report does, for the width
// goldens, which render checks whose paths are already normalised.
var CheckText = checkText
