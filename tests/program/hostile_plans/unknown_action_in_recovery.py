# expect: invalid line=5
def plan():
	find('lime')
	assert('lime' in 'hands')
		else: teleport('lime')
