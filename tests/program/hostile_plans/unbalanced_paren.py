# expect: parse-error line=3
def plan():
	assert(('close' to 'lime')
	grab('lime')
