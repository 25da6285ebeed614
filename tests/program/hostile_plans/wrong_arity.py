# expect: invalid line=4
def plan():
	grab('lime')
	putin('lime')
