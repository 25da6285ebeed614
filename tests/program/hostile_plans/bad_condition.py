# expect: parse-error line=3
def plan():
	assert('lime' near 'fridge')
