# expect: parse-error line=5
def plan():
	if 'fridge' is 'closed':
		open('fridge')
	elif 'fridge' is 'opened':
		close('fridge')
