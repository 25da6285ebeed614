# expect: parse-error line=4
def plan():
	assert('lime' in 'hands')
		grab('lime')
