# expect: parse-error line=3
def plan():
	assert('lime' in 'hands' and 'fridge' is 'closed')
